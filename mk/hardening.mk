# Hardening runs, not part of `make test` or CI (they take minutes and want a quiet machine):
#   make kill-test ROUNDS=20  concurrent uploads under SIGKILL: no acknowledged upload lost, no
#                             orphan left after the next start (scripts/kill-test.py)
.PHONY: kill-test

# Debian's own python3, which has the apt-installed packages (a pyenv or venv python may not).
HARDENING_PYTHON ?= $(firstword $(wildcard /usr/bin/python3) python3)

kill-test:
	@command -v gif2webp >/dev/null || scripts/install-deps.sh soak
	ROUNDS=$(or $(ROUNDS),20) $(HARDENING_PYTHON) scripts/kill-test.py
