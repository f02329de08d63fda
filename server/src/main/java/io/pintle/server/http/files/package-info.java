/**
 * The file pipeline on Jetty's core API: policies, common, the shared folder, shared-file downloads, {@code /uuid}
 * and relayd's hash HEAD. RFC 9110's conditional requests and ranges are evaluated by one function, {@code
 * FileConditions}; change waits ({@code ?wait=}) park the request without a thread. A plain download is answered
 * on the thread that read it.
 */
package io.pintle.server.http.files;
