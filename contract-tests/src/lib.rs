//! Contract tests against the real bridge live in `tests/`; they arrive with the contract-tests issue.
