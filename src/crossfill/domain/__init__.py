"""Pure logic, no I/O."""
