/**
 * Who the nodes are: node ids, key pins and the immutable registry built from {@code nodeslist.json} and the
 * certificate bundles ({@code nodescerts.pem}, {@code allnodescerts.pem}). A node is known only when every
 * configured input pins its key (see {@link io.pintle.server.nodes.NodeRegistry}). Plain Java: no web stack. A
 * registry never changes after construction; a reload builds a new one.
 */
package io.pintle.server.nodes;
