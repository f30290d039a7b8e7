"""Pure wire model of CETP v1/v2 and AndyClaw extensions: no Qt, no I/O."""
