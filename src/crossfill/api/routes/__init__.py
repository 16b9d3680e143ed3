"""Routes, one module per endpoint family."""
