"""The quote engine: amounts and fees (pure), steps, and the quote's wire shape."""
