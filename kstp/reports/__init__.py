"""Tables and plots shared by the evaluators and the command line (matplotlib, no pyplot)."""
