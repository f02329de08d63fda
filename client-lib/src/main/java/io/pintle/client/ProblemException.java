package io.pintle.client;

import io.pintle.api.dto.Problem;

/** A server answer with an error status, with the problem details the server sent. */
public final class ProblemException extends Exception {
    private static final long serialVersionUID = 1L;

    private final transient Problem problem;

    /**
     * @param problem the problem details; when the server sent none, one built from the status
     */
    public ProblemException(Problem problem) {
        super(problem.status() + " " + problem.title() + (problem.detail() == null ? "" : ": " + problem.detail()));
        this.problem = problem;
    }

    /** @return the server's problem details */
    public Problem problem() {
        return problem;
    }
}
