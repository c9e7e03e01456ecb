package kv

import "hash/crc32"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func checksum(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

func crcUpdate(c uint32, b []byte) uint32 { return crc32.Update(c, castagnoli, b) }
