"""The student edition: what students get instead of this repository (the lectures, the
assignments as released, the checks their visible tests import, an environment of their
own), and the lines that must never be in it."""
