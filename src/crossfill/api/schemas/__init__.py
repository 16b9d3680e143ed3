"""Wire schemas: pydantic models whose field names are the spec's exact wire names."""
