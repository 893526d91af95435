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
	"github.com/kubegitops/gitops/cache/store/redisstore"
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
	return redisstore.New(r.client, redisstore.DefaultOptions())
}

// nearBytes bounds a fleet process's in-memory tier in front of Redis
// (rendered outputs and dependency lists, least recently used first out).
const nearBytes = 64 << 20

// tiered is the render store a fleet host runs: an in-process tier in
// front of the server, so that a refresh whose inputs did not change reads
// no Redis key (two GETs per refresh were 7% of a 10,000-app fleet's
// steady CPU). A content-addressed output is the same in both tiers; a
// dependency list the near tier keeps after Redis has a newer one can only
// make a full key that misses, never a wrong hit.
func (r *redisServer) tiered() store.Store {
	mo := store.DefaultMemoryOptions()
	mo.MaxBytes = nearBytes
	return store.Tiered{Near: store.NewMemory(mo), Far: r.store()}
}

// stop closes the client and kills the server.
func (r *redisServer) stop() {
	r.client.Close()
	_ = r.cmd.Process.Kill()
	_ = r.cmd.Wait()
}
