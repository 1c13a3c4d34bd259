# The two set-up commands of the README. Each installs what it needs, so each works on a fresh machine.
.PHONY: demo test

demo:
	bash scripts/install.sh
	orchestra demo

test:
	bash scripts/install.sh --dev
	python3 -m pytest -q
