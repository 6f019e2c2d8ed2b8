package actions

import "strings"

// keySlot is a key's cluster hash slot (CRC16/XMODEM of its hash tag, or
// of the whole key, mod 16384), as the cluster computes it: the plan
// refuses a dead-letter stream in another slot before anything is sent.
func keySlot(key string) int {
	return int(crc16(hashTag(key)) % 16384)
}

// hashTag is the part of key the slot is computed from: the first
// non-empty {…}, or the whole key.
func hashTag(key string) string {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			return key[i+1 : i+1+j]
		}
	}
	return key
}

// suggestDLQ is a dead-letter stream name in key's slot: its hash tag
// (or the whole key, whose slot a tag of it shares) in braces.
func suggestDLQ(key string) string {
	return "{" + hashTag(key) + "}:dlq"
}

func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}
