/**
 * Wire contract of Pintle shared by the server and its clients: route prefixes, media types and the JSON
 * records exchanged. Nothing here depends on the server or on a web framework; {@code openapi.yaml} at the
 * repository root describes the same contract for non-Java clients.
 */
package io.pintle.api;
