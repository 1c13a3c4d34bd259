"""`python -m lab.testing --reply hi --port 8000`: serve the OpenAI-compatible test server until Ctrl-C."""

from lab.testing.openai_server import main

main()
