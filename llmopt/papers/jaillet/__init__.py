"""Jaillet et al. (J, J0): the §5.1 synthetic and §5.2 LMSYS suites."""
