package main

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubegitops/gitops/cache/store"
)

// redisServer is a redis-server the fleet section runs (without
// persistence, on a free loopback port) as the engine's shared render
// store, so that a restarted engine finds its renders there.
type redisServer struct {
	cmd    *exec.Cmd
	client *redis.Client
}

// startRedis starts redis-server and waits until it answers PING.
func startRedis(ctx context.Context) (*redisServer, error) {
	path, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("the fleet section needs redis-server (make redis installs it): %w", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(path, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("redis-server: %w", err)
	}
	r := &redisServer{cmd: cmd, client: redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), DialTimeout: time.Second, ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second})}
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		return r.client.Ping(ctx).Err() == nil, nil
	})
	if err != nil {
		r.stop()
		return nil, fmt.Errorf("redis-server on port %d did not answer: %w", port, err)
	}
	return r, nil
}

// store is a render store in the server.
func (r *redisServer) store() store.Store {
	return store.NewRedis(r.client, store.DefaultRedisOptions())
}

// stop closes the client and kills the server.
func (r *redisServer) stop() {
	r.client.Close()
	_ = r.cmd.Process.Kill()
	_ = r.cmd.Wait()
}
