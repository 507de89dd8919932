package order

// FloorDiv is a ÷ b rounded towards minus infinity: the index of the bin
// of width b that time a falls in, so that bins before time zero line up
// like those after it.
func FloorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
