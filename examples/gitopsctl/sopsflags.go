package main

import (
	"context"
	"flag"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/render/execdecrypt"
)

// sopsFlags decrypt SOPS files through gitops-sops, the program of the
// github.com/kubegitops/gitops/sops module (render/execdecrypt): gitopsctl
// is built from the library's own module, which does not link SOPS and its
// cloud SDKs.
type sopsFlags struct {
	command  string
	keyFiles stringList
}

func (s *sopsFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&s.command, "sops", "", "decrypt SOPS-encrypted files with this gitops-sops program (go install github.com/kubegitops/gitops/sops/cmd/gitops-sops); default gitops-sops from PATH when --sops-age-key-file is given")
	fs.Var(&s.keyFiles, "sops-age-key-file", "age identity file (keys.txt) that opens SOPS files; repeatable")
}

// apply sets opts.Decryptor when --sops or --sops-age-key-file is given;
// a program that is missing or refuses a key file is an error naming it.
func (s sopsFlags) apply(ctx context.Context, opts *gitops.Options) error {
	if s.command == "" && len(s.keyFiles) == 0 {
		return nil
	}
	command := s.command
	if command == "" {
		command = "gitops-sops"
	}
	var args []string
	for _, f := range s.keyFiles {
		args = append(args, "-age-key-file", f)
	}
	d, err := execdecrypt.New(ctx, execdecrypt.Options{Command: command, Args: args})
	if err != nil {
		return err
	}
	opts.Decryptor = d
	return nil
}
