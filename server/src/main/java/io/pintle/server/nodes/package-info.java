/**
 * Who the nodes are: node ids, key pins and the immutable registry built from {@code nodeslist.json} and the
 * certificate bundles ({@code nodescerts.pem}, {@code allnodescerts.pem}). A node is known only when every
 * configured input pins its key (see {@link io.pintle.server.nodes.NodeRegistry}). Plain Java: no web stack. A
 * registry never changes after construction; a reload builds a new one. How a client certificate authenticates
 * a node, in either or both of Rudder's trust modes (pinned keys, or chains to an organisation's CA with node ids
 * read by {@link io.pintle.server.nodes.IdRule}s), and what revokes certificates, is {@link
 * io.pintle.server.nodes.NodeTrust}, also immutable and rebuilt by each reload.
 */
package io.pintle.server.nodes;
