package io.pintle.api.dto;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/**
 * The freeze in force ({@code GET /v1/freeze}, the answer of {@code POST} and {@code DELETE /v1/freeze}, and part
 * of {@code /v1/status}).
 *
 * @param active whether anything is frozen
 * @param id the freeze's id, or null
 * @param since when it was taken (ISO-8601), or null
 * @param rollback whether the nodes are held on their previous generation
 * @param all whether every node with a policies directory was frozen
 * @param nodes the frozen nodes
 * @param reason what the operator said, or null
 * @param generation the snapshot generation that put this state in force (answers of POST and DELETE)
 * @param files files copied into the freeze (answer of POST)
 * @param linked of which hard-linked (the others were copied: another file system, or protected hard links)
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record FreezeState(boolean active, String id, String since, Boolean rollback, Boolean all,
        List<String> nodes, String reason, Long generation, Integer files, Integer linked) {}
