// Package appsim plays the application side of idempotency: it reserves and
// completes records with the same atomic scripts a service runs, to seed
// realistic keyspaces and to keep a demo alive. It never repairs anything.
//
// Floor 0 of ARCHITECTURE.md, a foundation: it imports no idemctl package
// but other foundations.
package appsim

import "github.com/redis/go-redis/v9"

// Reserve is the lesson's RESERVE script: create a PROCESSING record with
// its fingerprint and TTL unless one exists; a different fingerprint is a
// CONFLICT, the same one returns the stored state.
var Reserve = redis.NewScript(`
local key = KEYS[1]
local fingerprint = ARGV[1]
local ttl = tonumber(ARGV[2])
local exists = redis.call('EXISTS', key)
if exists == 0 then
  redis.call('HSET', key, 'fingerprint', fingerprint, 'state', 'PROCESSING')
  redis.call('EXPIRE', key, ttl)
  return {'STARTED'}
end
local stored = redis.call('HGET', key, 'fingerprint')
if stored ~= fingerprint then return {'CONFLICT'} end
return {redis.call('HGET', key, 'state') or 'UNKNOWN'}
`)

// Complete is the lesson's COMPLETE script: only the matching PROCESSING
// record becomes SUCCEEDED with its replay status and response, and gets the
// retention TTL.
var Complete = redis.NewScript(`
local key = KEYS[1]
local fingerprint = ARGV[1]
local status = ARGV[2]
local response = ARGV[3]
local ttl = tonumber(ARGV[4])
if redis.call('HGET', key, 'fingerprint') ~= fingerprint then return 0 end
if redis.call('HGET', key, 'state') ~= 'PROCESSING' then return 0 end
redis.call('HSET', key, 'state', 'SUCCEEDED', 'status', status, 'response', response)
redis.call('EXPIRE', key, ttl)
return 1
`)
