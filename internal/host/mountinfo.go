package host

import (
	"bufio"
	"io"
	"strings"
)

// parseMountinfo maps each "major:minor" to its first mount point and
// file system type.
func parseMountinfo(r io.Reader) map[string][2]string {
	mounts := map[string][2]string{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		// id parent major:minor root mountpoint opts... - fstype source superopts
		fs := strings.Fields(sc.Text())
		sep := -1
		for i, x := range fs {
			if x == "-" {
				sep = i
				break
			}
		}
		if len(fs) > 4 && sep > 0 && sep+1 < len(fs) {
			if _, ok := mounts[fs[2]]; !ok {
				mounts[fs[2]] = [2]string{unescapeMount(fs[4]), fs[sep+1]}
			}
		}
	}
	return mounts
}

// unescapeMount decodes the octal escapes (\040 for a space, \011, \012,
// \134) the kernel writes in mountinfo paths.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1]) && isOctal(s[i+2]) && isOctal(s[i+3]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }
