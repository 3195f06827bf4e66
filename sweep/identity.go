package sweep

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
)

// Identity returns a run's id: the first 16 hex digits of the SHA-256 of its
// canonical config, the parameters as {"key":value,...} with keys sorted and
// numbers normalised, leaving out any parameter named "priority" or "tags"
// (bookkeeping, not a cause of the result).
func Identity(params map[string]Value) string {
	sum := sha256.Sum256([]byte(canonicalConfig(params)))
	return hex.EncodeToString(sum[:8])
}

// canonicalConfig returns the text Identity hashes.
func canonicalConfig(params map[string]Value) string {
	keys := make([]string, 0, len(params))
	for k := range params {
		if k == "priority" || k == "tags" {
			continue
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(k))
		b.WriteByte(':')
		b.WriteString(params[k].canonical())
	}
	b.WriteByte('}')
	return b.String()
}
