"""Evals: run a suite of cases against agents and check the answers (`riverbeam eval`).

EvalSuite, EvalCase, load_suite                 the suite file and its assertions
run_suite, InProcessTarget, RouterTarget         running it, here or through a router
SuiteResult, CaseResult, AttemptResult           results, as JSON or JUnit XML
Judge, Answer, Check, check_answer               checking one answer (the rubric judge)
"""

from riverbeam.evals._assertions import Answer, Check, Judge, check_answer
from riverbeam.evals._run import (
    AttemptResult,
    CaseResult,
    InProcessTarget,
    RouterTarget,
    SuiteResult,
    Target,
    run_suite,
)
from riverbeam.evals._suite import Assertion, EvalCase, EvalSuite, load_suite

__all__ = [
    "Answer",
    "Assertion",
    "AttemptResult",
    "CaseResult",
    "Check",
    "EvalCase",
    "EvalSuite",
    "InProcessTarget",
    "Judge",
    "RouterTarget",
    "SuiteResult",
    "Target",
    "check_answer",
    "load_suite",
    "run_suite",
]
