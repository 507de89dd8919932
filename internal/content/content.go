package content

import (
	"encoding/binary"
	"math"
)

// PageSize is the unit zram compresses, and the most a sample holds.
const PageSize = 4096

// Compressed estimates the size of p after a fast LZ77 compressor of
// zram's kind (LZO, LZ4): greedy matches of at least 4 bytes within 64 KiB,
// found through a hash of the next 4 bytes, each costing a token, an offset
// and its length's extra bytes; everything else a literal. Data that would
// not shrink is stored as it is: the result is at most len(p).
func Compressed(p []byte) int {
	const minMatch = 4
	var table [1 << hashBits]int32 // position + 1 of the last 4 bytes with each hash
	out, lit, i := 0, 0, 0
	for i+minMatch <= len(p) {
		v := binary.LittleEndian.Uint32(p[i:])
		h := (v * 2654435761) >> (32 - hashBits)
		cand := int(table[h]) - 1
		table[h] = int32(i + 1)
		if cand < 0 || i-cand > 65535 || binary.LittleEndian.Uint32(p[cand:]) != v {
			lit++
			i++
			continue
		}
		n := minMatch
		for i+n < len(p) && p[cand+n] == p[i+n] {
			n++
		}
		out += 1 + 2 + lit + lit/255 + (n-minMatch)/255 // token, offset, literals, lengths' extra bytes
		lit = 0
		i += n
	}
	lit += len(p) - i
	out += 1 + lit + lit/255
	return min(out, len(p))
}

const hashBits = 12

// Saved is how many bytes of p compression would save.
func Saved(p []byte) int { return len(p) - Compressed(p) }

// Text fills p with text-like data: 128 made-up words of 2 to 11 letters,
// the k-th most common about 1/k as often as the first (Zipf), in lines.
// Compression saves about half of it (0.48 by Compressed, 0.53 on zram's
// lzo-rle), between a browser's files and C headers (0.61 by Compressed,
// 0.62 on zram). Deterministic for a seed.
func Text(p []byte, seed uint64) {
	r := rng{s: seed | 1}
	vocab := make([][]byte, 128)
	for i := range vocab {
		w := make([]byte, 2+r.next()%10)
		for j := range w {
			w[j] = byte('a' + r.next()%26)
		}
		vocab[i] = w
	}
	col := 0
	for i := 0; i < len(p); {
		// Zipf-like: the rank is log-uniform, so rank k comes about 1/k
		// as often as the first.
		u := float64(r.next()>>11) / (1 << 53)
		w := vocab[int(math.Exp(u*math.Log(float64(len(vocab)))))-1]
		i += copy(p[i:], w)
		col += len(w) + 1
		if i < len(p) {
			if col > 72 {
				p[i], col = '\n', 0
			} else {
				p[i] = ' '
			}
			i++
		}
	}
}

// Random fills p with bytes nothing compresses.
func Random(p []byte, seed uint64) {
	r := rng{s: seed | 1}
	for i := 0; i+8 <= len(p); i += 8 {
		binary.LittleEndian.PutUint64(p[i:], r.next())
	}
	for i := len(p) &^ 7; i < len(p); i++ {
		p[i] = byte(r.next())
	}
}

// SavedShare is the share of data compression saves, page by page.
func SavedShare(p []byte) float64 {
	if len(p) == 0 {
		return 0
	}
	saved := 0
	for i := 0; i < len(p); i += PageSize {
		saved += Saved(p[i:min(i+PageSize, len(p))])
	}
	return float64(saved) / float64(len(p))
}

// rng is xorshift64*: fast, and the same everywhere.
type rng struct{ s uint64 }

func (r *rng) next() uint64 {
	r.s ^= r.s >> 12
	r.s ^= r.s << 25
	r.s ^= r.s >> 27
	return r.s * 2685821657736338717
}
