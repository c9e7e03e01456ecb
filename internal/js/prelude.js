// mongod's server-side helpers (a subset of the shell's types.js and
// utils.js), installed in every runtime. The __native object holds the Go
// functions they call; it is removed from the global object afterwards.
(function (g, n) {
    "use strict";
    function hidden(o, k, v) {
        Object.defineProperty(o, k, {value: v, writable: false, enumerable: false, configurable: false});
    }
    function ctor(name, f) {
        hidden(g, name, f);
        f.prototype.constructor = f;
    }

    function NumberLong(v) {
        if (!(this instanceof NumberLong)) return new NumberLong(v);
        hidden(this, "__v", n.toLong(v === undefined ? 0 : v));
    }
    ctor("NumberLong", NumberLong);
    Object.defineProperty(NumberLong.prototype, "floatApprox", {get: function () { return Number(this.__v); }});
    NumberLong.prototype.valueOf = function () { return Number(this.__v); };
    NumberLong.prototype.toNumber = NumberLong.prototype.valueOf;
    NumberLong.prototype.toString = function () {
        var x = Number(this.__v);
        return Number.isSafeInteger(x) ? "NumberLong(" + this.__v + ")" : "NumberLong(\"" + this.__v + "\")";
    };
    NumberLong.prototype.tojson = NumberLong.prototype.toString;
    NumberLong.prototype.compare = function (o) {
        return n.compareLong(this.__v, (o instanceof NumberLong) ? o.__v : n.toLong(o));
    };
    NumberLong.prototype.equals = function (o) { return this.compare(o) === 0; };

    function NumberInt(v) {
        if (!(this instanceof NumberInt)) return new NumberInt(v);
        hidden(this, "__v", (Number(v === undefined ? 0 : v) | 0));
    }
    ctor("NumberInt", NumberInt);
    NumberInt.prototype.valueOf = function () { return this.__v; };
    NumberInt.prototype.toNumber = NumberInt.prototype.valueOf;
    NumberInt.prototype.toString = function () { return "NumberInt(" + this.__v + ")"; };
    NumberInt.prototype.tojson = NumberInt.prototype.toString;

    function NumberDecimal(v) {
        if (!(this instanceof NumberDecimal)) return new NumberDecimal(v);
        hidden(this, "__v", n.toDecimal(v === undefined ? "0" : v));
    }
    ctor("NumberDecimal", NumberDecimal);
    NumberDecimal.prototype.toString = function () { return "NumberDecimal(\"" + this.__v + "\")"; };
    NumberDecimal.prototype.tojson = NumberDecimal.prototype.toString;
    NumberDecimal.prototype.valueOf = function () { return Number(this.__v); };

    function ObjectId(hex) {
        if (!(this instanceof ObjectId)) return new ObjectId(hex);
        hidden(this, "__v", hex === undefined ? n.newOid() : n.checkOid(hex));
    }
    ctor("ObjectId", ObjectId);
    Object.defineProperty(ObjectId.prototype, "str", {get: function () { return this.__v; }});
    ObjectId.prototype.toString = function () { return "ObjectId(\"" + this.__v + "\")"; };
    ObjectId.prototype.tojson = ObjectId.prototype.toString;
    ObjectId.prototype.toHexString = function () { return this.__v; };
    ObjectId.prototype.valueOf = function () { return this.__v; };
    ObjectId.prototype.equals = function (o) { return o instanceof ObjectId && o.__v === this.__v; };
    ObjectId.prototype.getTimestamp = function () { return new Date(parseInt(this.__v.substr(0, 8), 16) * 1000); };

    function BinData(type, b64) {
        if (!(this instanceof BinData)) return new BinData(type, b64);
        hidden(this, "__t", n.checkSubtype(type));
        hidden(this, "__v", n.checkBase64(b64));
    }
    ctor("BinData", BinData);
    BinData.prototype.base64 = function () { return this.__v; };
    BinData.prototype.hex = function () { return n.base64ToHex(this.__v); };
    BinData.prototype.subtype = function () { return this.__t; };
    BinData.prototype.length = function () { return n.base64Len(this.__v); };
    BinData.prototype.toString = function () { return "BinData(" + this.__t + ",\"" + this.__v + "\")"; };
    BinData.prototype.tojson = BinData.prototype.toString;
    hidden(g, "HexData", function (type, hex) { return new BinData(type, n.hexToBase64(hex)); });
    hidden(g, "UUID", function (hex) {
        return new BinData(4, n.hexToBase64(hex === undefined ? n.newUUID() : String(hex).replace(/-/g, "")));
    });

    function Timestamp(t, i) {
        if (!(this instanceof Timestamp)) return new Timestamp(t, i);
        hidden(this, "t", n.checkUint32(t === undefined ? 0 : t, "Timestamp time"));
        hidden(this, "i", n.checkUint32(i === undefined ? 0 : i, "Timestamp increment"));
    }
    ctor("Timestamp", Timestamp);
    Timestamp.prototype.getTime = function () { return this.t; };
    Timestamp.prototype.getInc = function () { return this.i; };
    Timestamp.prototype.toString = function () { return "Timestamp(" + this.t + ", " + this.i + ")"; };
    Timestamp.prototype.tojson = Timestamp.prototype.toString;

    function MinKeyType() {}
    function MaxKeyType() {}
    var minKey = new MinKeyType(), maxKey = new MaxKeyType();
    MinKeyType.prototype.tojson = function () { return "{ \"$minKey\" : 1 }"; };
    MaxKeyType.prototype.tojson = function () { return "{ \"$maxKey\" : 1 }"; };
    MinKeyType.prototype.toString = function () { return "[object MinKey]"; };
    MaxKeyType.prototype.toString = function () { return "[object MaxKey]"; };
    hidden(g, "MinKey", function () { return minKey; });
    hidden(g, "MaxKey", function () { return maxKey; });

    function Code(code, scope) {
        if (!(this instanceof Code)) return new Code(code, scope);
        this.code = String(code);
        if (scope !== undefined) this.scope = scope;
    }
    ctor("Code", Code);
    Code.prototype.toString = function () { return "Code(" + JSON.stringify(this.code) + ")"; };
    Code.prototype.tojson = Code.prototype.toString;

    function DBPointer(ns, id) {
        if (!(this instanceof DBPointer)) return new DBPointer(ns, id);
        this.ns = String(ns);
        this.id = id;
    }
    ctor("DBPointer", DBPointer);

    function DBRef(ref, id, db) {
        if (!(this instanceof DBRef)) return new DBRef(ref, id, db);
        this.$ref = ref;
        this.$id = id;
        if (db !== undefined) this.$db = db;
    }
    ctor("DBRef", DBRef);

    hidden(g, "ISODate", function (s) {
        if (s === undefined) return new Date();
        return new Date(n.parseISODate(String(s)));
    });

    hidden(Array, "sum", function (a) {
        if (a.length === 0) return null;
        var s = a[0];
        for (var i = 1; i < a.length; i++) s += a[i];
        return s;
    });
    hidden(Array, "avg", function (a) {
        if (a.length === 0) return null;
        return Array.sum(a) / a.length;
    });
    hidden(Array, "contains", function (a, x) {
        for (var i = 0; i < a.length; i++) if (a[i] === x) return true;
        return false;
    });
    hidden(Array, "unique", function (a) {
        var u = [];
        for (var i = 0; i < a.length; i++) if (!Array.contains(u, a[i])) u.push(a[i]);
        return u;
    });
    hidden(Object, "bsonsize", function (o) { return n.bsonsize(o); });

    function quote(s) { return JSON.stringify(s); }
    function tojsonObject(x, indent, nolint) {
        var nl = nolint ? " " : "\n", tab = nolint ? "" : "\t";
        if (typeof x.tojson === "function" && x.tojson !== tojson) return x.tojson(indent, nolint);
        if (x instanceof Date) return "ISODate(\"" + n.formatISODate(x.getTime()) + "\")";
        if (x instanceof RegExp) return x.toString();
        if (x instanceof Error) return x.toString();
        var inner = indent + tab, parts = [];
        if (Array.isArray(x)) {
            if (x.length === 0) return "[ ]";
            for (var i = 0; i < x.length; i++) parts.push(inner + tojson(x[i], inner, nolint));
            return "[" + nl + parts.join("," + nl) + nl + indent + "]";
        }
        for (var k in x) {
            if (typeof x[k] === "function") continue;
            parts.push(inner + quote(k) + " : " + tojson(x[k], inner, nolint));
        }
        if (parts.length === 0) return "{ }";
        return "{" + nl + parts.join("," + nl) + nl + indent + "}";
    }
    function tojson(x, indent, nolint) {
        if (x === null) return "null";
        if (x === undefined) return "undefined";
        if (!indent) indent = "";
        switch (typeof x) {
        case "string": return quote(x);
        case "number": case "boolean": return "" + x;
        case "object":
            var s = tojsonObject(x, indent, nolint);
            if ((nolint == null || nolint === true) && s.length < 80 && indent.length === 0) {
                s = s.replace(/[\t\r\n]+/gm, " ");
            }
            return s;
        case "function": return x.toString();
        default: throw new Error("tojson can't handle type " + (typeof x));
        }
    }
    hidden(g, "tojson", tojson);
    hidden(g, "tojsononeline", function (x) { return tojson(x, " ", true); });
    hidden(g, "tojsonObject", tojsonObject);
    hidden(g, "isNumber", function (x) { return typeof x === "number"; });
    hidden(g, "isString", function (x) { return typeof x === "string"; });
    hidden(g, "isObject", function (x) { return typeof x === "object" && x !== null; });
    hidden(g, "hex_md5", function (s) { return n.md5(String(s)); });
    hidden(g, "print", function () {});
    hidden(g, "printjson", function () {});
    hidden(g, "sleep", function (ms) { n.sleep(Number(ms)); });
})(this, __native);
