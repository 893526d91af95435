package sops

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// BenchmarkDecryptFile is the cost of one SOPS file on a render cache
// miss: parse, age-unwrap the data key, decrypt every value, check the
// MAC, emit. A plain file's cost (the "not encrypted" answer) is beside it.
func BenchmarkDecryptFile(b *testing.B) {
	id, rcp := newIdentity(b)
	d := newDecryptor(b, id)
	var big strings.Builder
	big.WriteString("apiVersion: v1\nkind: Secret\nmetadata: {name: big}\nstringData:\n")
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&big, "  key%03d: value-%03d\n", i, i)
	}
	cases := []struct{ name, file, plain string }{
		{"secret-1-value", "secret.yaml", secretYAML},
		{"secret-100-values", "big.yaml", big.String()},
		{"dotenv-1-value", "app.env", "API_KEY=abc\n"},
	}
	for _, c := range cases {
		enc := []byte(encryptFile(b, c.file, c.plain, "^(data|stringData)$", rcp))
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, ok, err := d.Decrypt(context.Background(), c.file, enc); err != nil || !ok {
					b.Fatal(err)
				}
			}
		})
	}
	plain := []byte(big.String())
	b.Run("plain-file", func(b *testing.B) {
		for b.Loop() {
			if _, ok, _ := d.Decrypt(context.Background(), "big.yaml", plain); ok {
				b.Fatal("a plain file was taken for encrypted")
			}
		}
	})
}
