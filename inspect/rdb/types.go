package rdb

// Value types and opcodes as rdb.h numbers them.
const (
	typeString          = 0
	typeList            = 1
	typeSet             = 2
	typeZSet            = 3
	typeHash            = 4
	typeZSet2           = 5
	typeModulePreGA     = 6
	typeModule2         = 7
	typeHashZipmap      = 9
	typeListZiplist     = 10
	typeSetIntset       = 11
	typeZSetZiplist     = 12
	typeHashZiplist     = 13
	typeListQuicklist   = 14
	typeStreamListpacks = 15
	typeHashListpack    = 16
	typeZSetListpack    = 17
	typeListQuicklist2  = 18
	typeStreamListpack2 = 19
	typeSetListpack     = 20
	typeStreamListpack3 = 21
	typeHashMetaPreGA   = 22 // hashtable with field TTLs, absolute (7.4 RC)
	typeHashLpExPreGA   = 23 // listpack with field TTLs, no min-expire prefix (7.4 RC)
	typeHashMeta        = 24 // hashtable with field TTLs relative to a min-expire prefix
	typeHashLpEx        = 25 // listpack of (field, value, TTL) after a min-expire prefix

	opSlotInfo      = 244
	opFunction2     = 245
	opFunctionPreGA = 246
	opModuleAux     = 247
	opIdle          = 248
	opFreq          = 249
	opAux           = 250
	opResizeDB      = 251
	opExpireMs      = 252
	opExpire        = 253
	opSelectDB      = 254
	opEOF           = 255

	moduleOpEOF    = 0
	moduleOpSint   = 1
	moduleOpUint   = 2
	moduleOpFloat  = 3
	moduleOpDouble = 4
	moduleOpString = 5
)

func isObjectType(t byte) bool { return t <= 7 || t >= 9 && t <= 25 }

func typeOf(t byte) Type {
	switch t {
	case typeString:
		return TypeString
	case typeList, typeListZiplist, typeListQuicklist, typeListQuicklist2:
		return TypeList
	case typeSet, typeSetIntset, typeSetListpack:
		return TypeSet
	case typeZSet, typeZSet2, typeZSetZiplist, typeZSetListpack:
		return TypeZSet
	case typeHash, typeHashZipmap, typeHashZiplist, typeHashListpack,
		typeHashMetaPreGA, typeHashLpExPreGA, typeHashMeta, typeHashLpEx:
		return TypeHash
	case typeStreamListpacks, typeStreamListpack2, typeStreamListpack3:
		return TypeStream
	case typeModulePreGA, typeModule2:
		return TypeModule
	}
	return 0
}

func encodingOf(t byte) string {
	switch t {
	case typeString:
		return "string" // refined to raw, int or lzf once read
	case typeHash, typeSet:
		return "hashtable"
	case typeZSet, typeZSet2:
		return "skiplist"
	case typeHashMeta, typeHashMetaPreGA:
		return "hashtable-field-ttl"
	case typeHashZipmap:
		return "zipmap"
	case typeHashZiplist, typeZSetZiplist, typeListZiplist:
		return "ziplist"
	case typeHashListpack, typeZSetListpack, typeSetListpack:
		return "listpack"
	case typeHashLpEx, typeHashLpExPreGA:
		return "listpack-field-ttl"
	case typeSetIntset:
		return "intset"
	case typeList:
		return "linkedlist"
	case typeListQuicklist, typeListQuicklist2:
		return "quicklist"
	case typeStreamListpacks, typeStreamListpack2, typeStreamListpack3:
		return "stream"
	}
	return "module"
}
