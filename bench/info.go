package main

import (
	"bufio"
	"context"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// usedMemory is the server's used_memory (INFO memory).
func usedMemory(ctx context.Context, c *redis.Client) int64 {
	mem, _ := strconv.ParseInt(infoField(ctx, c, "memory", "used_memory"), 10, 64)
	return mem
}

// infoField is one field of an INFO section ("" when unreadable).
func infoField(ctx context.Context, c *redis.Client, section, field string) string {
	info, err := c.Info(ctx, section).Result()
	if err != nil {
		return ""
	}
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
