package kubeutil

import "unicode/utf8"

// MaxConditionMessageBytes is the API server's limit on a
// metav1.Condition's message (its CRD schema and validation allow 32768
// bytes). A status write with a longer message is refused whole, so the
// condition, and every other status field in the same write, would be lost.
const MaxConditionMessageBytes = 32768

// truncatedSuffix ends a message cut to fit.
const truncatedSuffix = " … (truncated)"

// ConditionMessage returns msg cut to fit a condition's message, at a UTF-8
// character boundary and marked as truncated. Messages can name things
// without bound (hosted clusters on a management cluster, label keys of a
// tenant's object), so every writer of conditions passes them through here.
func ConditionMessage(msg string) string {
	if len(msg) <= MaxConditionMessageBytes {
		return msg
	}
	cut := MaxConditionMessageBytes - len(truncatedSuffix)
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + truncatedSuffix
}
