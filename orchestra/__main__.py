"""`python -m orchestra ...`: the `orchestra` command, for launchers that start a module on every rank
(`torchrun -m orchestra train ...`, `accelerate launch -m orchestra train ...`)."""

from orchestra.cli import main

if __name__ == "__main__":
    main()
