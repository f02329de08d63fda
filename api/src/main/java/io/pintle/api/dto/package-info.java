/** JSON records of the wire contract. Field names are the JSON names unless annotated. */
package io.pintle.api.dto;
