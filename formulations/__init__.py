"""Formulations: declarative builders of solver-neutral canonical models."""
