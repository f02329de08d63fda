package io.pintle.api.dto;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/**
 * {@code GET /v1/nodes/{id}/diff}: what changed in a node's policy tree ({@code rules/cfengine-community}) between
 * what it last fetched and what is served to it now.
 *
 * @param node the node
 * @param fetchedEtag the ETag it last fetched, or null when it never fetched
 * @param fetchedAt when, or null
 * @param keptEtag the ETag of the copy the diff starts from, or null when none is kept (then every file is added)
 * @param currentEtag the ETag served now, or null
 * @param behind whether it does not hold what is served now
 * @param added files only in the current tree
 * @param removed files only in what it fetched
 * @param changed files in both that differ
 * @param unchanged how many files are the same
 * @param truncated whether some diff text was left out (a file over 256 KiB, or 512 KiB of diffs in all)
 * @param note what the operator should know about the comparison, or null
 */
@JsonInclude(JsonInclude.Include.ALWAYS)
public record NodeDiff(
        String node,
        @JsonProperty("fetched_etag") String fetchedEtag,
        @JsonProperty("fetched_at") String fetchedAt,
        @JsonProperty("kept_etag") String keptEtag,
        @JsonProperty("current_etag") String currentEtag,
        boolean behind,
        List<String> added,
        List<String> removed,
        List<Change> changed,
        int unchanged,
        boolean truncated,
        @JsonInclude(JsonInclude.Include.NON_NULL) String note) {

    /**
     * @param path the file, below {@code rules/cfengine-community}
     * @param binary whether it is not UTF-8 text
     * @param diff its unified diff, or null (binary, or left out: see {@code truncated})
     * @param truncated whether the diff was left out for a bound
     */
    public record Change(String path, boolean binary, String diff, boolean truncated) {}
}
