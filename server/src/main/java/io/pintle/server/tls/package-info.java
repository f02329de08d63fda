/**
 * TLS material and Jetty's TLS wiring. Client certificates are requested, never required, and any certificate is
 * accepted at the handshake: who the client is gets decided per request against the current snapshot, so a
 * node added or removed by a reload is seen at once, and TLS session resumption cannot bypass it. The
 * CertificateRequest carries an empty CA list, whatever the number of nodes (Rudder #27156).
 */
package io.pintle.server.tls;
