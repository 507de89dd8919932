package host

import (
	"bufio"
	"io"
	"strings"
)

// mountPoints are a device's mount points and its file system type: the
// first mounted, then the others (a bind mount, a second mount), at most
// maxMounts of those.
type mountPoints struct {
	first, fstype string
	others        []string
}

// maxMounts bounds the other mount points kept of one device (a
// container host binds one file system into hundreds of places).
const maxMounts = 16

// parseMountinfo maps each "major:minor" to its mount points and file
// system type.
func parseMountinfo(r io.Reader) map[string]*mountPoints {
	mounts := map[string]*mountPoints{}
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
			at := unescapeMount(fs[4])
			switch m := mounts[fs[2]]; {
			case m == nil:
				mounts[fs[2]] = &mountPoints{first: at, fstype: fs[sep+1]}
			case len(m.others) < maxMounts:
				m.others = append(m.others, at)
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
