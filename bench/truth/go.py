"""Go's own rules: its predeclared names are not uses (bench/context_truth.py says the rules)."""

GO_PREDECLARED = frozenset(
    "bool byte complex64 complex128 error float32 float64 int int8 int16 int32 int64 rune string uint uint8 "
    "uint16 uint32 uint64 uintptr true false iota nil append cap close complex copy delete imag len make new "
    "panic print println real recover any comparable min max clear".split())
