package notify

import (
	"context"
	"fmt"

	"github.com/argoproj/notifications-engine/pkg/services"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// checkAWSConfig loads the AWS configuration of an awssqs service as its
// send does (static credentials when key and secret are set, the region,
// and else the environment and shared files). notifications-engine's awssqs
// service ends the process when that fails; this turns it into the send's
// error.
func checkAWSConfig(ctx context.Context, opts services.AwsSqsOptions) error {
	var load []func(*config.LoadOptions) error
	if opts.Key != "" && opts.Secret != "" {
		load = append(load, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(opts.Key, opts.Secret, "")))
	}
	if opts.Region != "" {
		load = append(load, config.WithRegion(opts.Region))
	}
	if _, err := config.LoadDefaultConfig(ctx, load...); err != nil {
		return fmt.Errorf("the AWS configuration does not load: %w", err)
	}
	return nil
}
