package main

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strconv"
	"time"
)

// Literals the ClickBench pipelines filter on; the generator makes rows
// that carry them.
const (
	litUserID      int64 = 435090932899640449
	litURLHash     int64 = 2868770270353813622 // the hash of the most frequent URL
	litRefererHash int64 = 3594120000172545465 // the hash of the most frequent referer
)

// hit holds the columns of one generated row that the checker reads (the
// other columns only fill the documents).
type hit struct {
	WatchID, UserID, RefererHash, URLHash int64
	EventTime, EventDate                  int64 // Unix seconds, UTC
	Title, URL, Referer                   string
	MobilePhoneModel, SearchPhrase        string
	CounterID, ClientIP, RegionID         int32
	Refresh, ResolutionWidth, MobilePhone int32
	TraficSourceID, SearchEngineID        int32
	AdvEngineID                           int32
	WindowClientWidth, WindowClientHeight int32
	IsLink, IsDownload, DontCountHits     int32
}

var (
	july2013 = time.Date(2013, 7, 1, 0, 0, 0, 0, time.UTC).Unix()
	words    = []string{"купить", "квартира", "weather", "москва", "новости", "video", "online", "free",
		"download", "игры", "music", "cars", "работа", "cinema", "recipe", "holiday", "football", "map",
		"translate", "mail", "photo", "книги", "train", "hotel", "price", "review", "how", "to", "best",
		"cheap", "2013", "iphone", "samsung", "фильм", "погода", "авто", "бесплатно", "смотреть"}
	domains = []string{"yandex.ru", "mail.ru", "vk.com", "livejournal.com", "avito.ru", "rambler.ru",
		"odnoklassniki.ru", "kinopoisk.ru", "auto.ru", "lenta.ru", "rbc.ru", "wikipedia.org", "ria.ru",
		"hh.ru", "drom.ru", "irr.ru", "gismeteo.ru", "afisha.ru", "championat.com", "kp.ru"}
	models = []string{"iPad", "iPhone", "GT-I9300", "GT-S5830", "HTC One", "Lumia 920", "Nexus 4",
		"GT-N7100", "Xperia Z", "Galaxy Tab", "MB526", "LT26i", "A820", "HUAWEI U8950", "Desire HD"}
	widths   = []int32{1366, 1920, 1280, 1024, 1600, 1440, 1680, 1360, 800, 1536, 2560, 320}
	charsets = []string{"utf-8", "windows-1251", "koi8-r", ""}
	langs    = []string{"ru", "en", "uk", "tr", "de", "be", "kk"}
)

// logUniform picks an index in [0, n) with P(k) roughly proportional to
// 1/(k+1): a heavy head and a long tail.
func logUniform(r *rand.Rand, n int) int {
	k := int(math.Exp(r.Float64()*math.Log(float64(n)+1))) - 1
	return min(max(k, 0), n-1)
}

// hash64 is the stand-in for ClickBench's URLHash/RefererHash.
func hash64(s string) int64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return int64(h.Sum64())
}

// phrase builds the k-th distinct text of a vocabulary from words.
func phrase(k int, nwords int) string {
	b := make([]byte, 0, 48)
	x := uint64(k)*2654435761 + 17
	for i := 0; i < nwords; i++ {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, words[x%uint64(len(words))]...)
		x /= uint64(len(words))
	}
	return string(strconv.AppendInt(append(b, ' '), int64(k), 10))
}

func urlOf(k int) string {
	if k == 0 {
		return "http://yandex.ru/"
	}
	d := domains[(k*7)%len(domains)]
	if k%53 == 7 {
		// A share of URLs mention google: search result pages (.google.)
		// and links carrying it in the query string.
		if k%2 == 1 {
			return "http://www.google.ru/search?q=" + strconv.Itoa(k)
		}
		return "http://" + d + "/go?from=google&id=" + strconv.Itoa(k)
	}
	return "http://" + d + "/" + words[k%len(words)] + "/" + strconv.Itoa(k) + ".html"
}

// refererOf: referer 0 is the most frequent (its hash is litRefererHash);
// domains repeat, so grouping by domain gives a few large groups.
func refererOf(k int) string {
	if k == 0 {
		return "http://www.yandex.ru/"
	}
	var d string
	switch k % 10 {
	case 0, 1, 2, 3:
		d = "yandex.ru"
	case 4, 5:
		d = "www.google.ru"
	case 6:
		d = "go.mail.ru"
	default:
		d = domains[k%len(domains)]
	}
	return "http://" + d + "/" + words[k%len(words)] + "?r=" + strconv.Itoa(k)
}

func titleOf(k int) string {
	if k%61 == 11 {
		return "Google " + phrase(k, 2)
	}
	return phrase(k, 3)
}

// userOf maps a user number to a UserID; user 3 is the literal the
// benchmark looks up.
func userOf(k int) int64 {
	if k == 3 {
		return litUserID
	}
	return int64(uint64(k)*0x9E3779B97F4A7C15>>1) | 1<<40
}

// genRow generates row i of the data set seeded by seed into h and
// appends its TSV line (with the trailing newline) to dst.
func genRow(seed uint64, i int, h *hit, dst []byte, isRefresh bool) []byte {
	r := rand.New(rand.NewPCG(seed, uint64(i)))
	*h = hit{}
	h.WatchID = r.Int64() | 1<<62
	switch x := r.Float64(); {
	case x < 0.30:
		h.CounterID = 62
	case x < 0.44:
		h.CounterID = 1143050
	case x < 0.55:
		h.CounterID = 842
	default:
		h.CounterID = int32(100 + logUniform(r, 5000))
	}
	day := r.IntN(31)
	if h.CounterID == 62 {
		if x := r.Float64(); x < 0.7 {
			day = 14
		} else if x < 0.8 {
			day = 13
		}
	}
	h.EventDate = july2013 + int64(day)*86400
	h.EventTime = h.EventDate + int64(r.IntN(86400))
	h.ClientIP = int32(uint32(logUniform(r, 300000)) * 2654435761)
	h.RegionID = int32(logUniform(r, 8000))
	h.UserID = userOf(logUniform(r, 150000))
	if r.Float64() < 0.08 {
		h.URL = urlOf(0)
	} else if r.Float64() < 0.02 {
		h.URL = ""
	} else {
		h.URL = urlOf(logUniform(r, 200000))
	}
	switch x := r.Float64(); {
	case x < 0.30:
		h.Referer = ""
	case x < 0.36:
		h.Referer = refererOf(0)
	default:
		h.Referer = refererOf(1 + logUniform(r, 100000))
	}
	if r.Float64() < 0.90 {
		h.Title = titleOf(logUniform(r, 60000))
	}
	if r.Float64() < 0.13 {
		h.SearchPhrase = phrase(logUniform(r, 30000), 2)
		h.SearchEngineID = int32(2 + logUniform(r, 60))
	}
	if r.Float64() < 0.006 {
		h.AdvEngineID = int32(1 + logUniform(r, 40))
	}
	if r.Float64() < 0.1 {
		h.Refresh = 1
	}
	h.ResolutionWidth = widths[logUniform(r, len(widths))]
	if r.Float64() < 0.03 {
		h.ResolutionWidth = 0
	}
	if r.Float64() < 0.12 {
		h.MobilePhone = int32(1 + logUniform(r, 60))
		h.MobilePhoneModel = models[logUniform(r, len(models))]
	}
	h.TraficSourceID = int32(r.IntN(11)) - 1
	h.WindowClientWidth = int32(r.IntN(2000))
	h.WindowClientHeight = int32(r.IntN(1200))
	if r.Float64() < 0.1 {
		h.IsLink = 1
	}
	if r.Float64() < 0.02 {
		h.IsDownload = 1
	}
	if r.Float64() < 0.1 {
		h.DontCountHits = 1
	}
	h.URLHash = hash64(h.URL)
	if h.URL == urlOf(0) {
		h.URLHash = litURLHash
	}
	h.RefererHash = hash64(h.Referer)
	if h.Referer == refererOf(0) {
		h.RefererHash = litRefererHash
	}
	return appendTSV(dst, r, h, isRefresh)
}

// The shaped columns, read from a hit.
var (
	intColumns = map[int]func(h *hit) int64{
		cWatchID: func(h *hit) int64 { return h.WatchID }, cCounterID: func(h *hit) int64 { return int64(h.CounterID) },
		cClientIP: func(h *hit) int64 { return int64(h.ClientIP) }, cRegionID: func(h *hit) int64 { return int64(h.RegionID) },
		cUserID: func(h *hit) int64 { return h.UserID }, cRefresh: func(h *hit) int64 { return int64(h.Refresh) },
		cResolutionWidth: func(h *hit) int64 { return int64(h.ResolutionWidth) }, cMobilePhone: func(h *hit) int64 { return int64(h.MobilePhone) },
		cTraficSourceID: func(h *hit) int64 { return int64(h.TraficSourceID) }, cSearchEngineID: func(h *hit) int64 { return int64(h.SearchEngineID) },
		cAdvEngineID: func(h *hit) int64 { return int64(h.AdvEngineID) }, cWindowClientWidth: func(h *hit) int64 { return int64(h.WindowClientWidth) },
		cWindowClientHeight: func(h *hit) int64 { return int64(h.WindowClientHeight) }, cIsLink: func(h *hit) int64 { return int64(h.IsLink) },
		cIsDownload: func(h *hit) int64 { return int64(h.IsDownload) }, cDontCountHits: func(h *hit) int64 { return int64(h.DontCountHits) },
		cRefererHash: func(h *hit) int64 { return h.RefererHash }, cURLHash: func(h *hit) int64 { return h.URLHash },
	}
	stringColumns = map[int]func(h *hit) string{
		cTitle: func(h *hit) string { return h.Title }, cURL: func(h *hit) string { return h.URL },
		cReferer: func(h *hit) string { return h.Referer }, cMobilePhoneModel: func(h *hit) string { return h.MobilePhoneModel },
		cSearchPhrase: func(h *hit) string { return h.SearchPhrase },
	}
)

func appendTSV(b []byte, r *rand.Rand, h *hit, isRefresh bool) []byte {
	ts := func(b []byte, sec int64) []byte {
		return time.Unix(sec, 0).UTC().AppendFormat(b, "2006-01-02 15:04:05")
	}
	for c, col := range columns {
		if c > 0 {
			b = append(b, '\t')
		}
		if f := intColumns[c]; f != nil {
			b = strconv.AppendInt(b, f(h), 10)
			continue
		}
		if f := stringColumns[c]; f != nil {
			b = append(b, f(h)...)
			continue
		}
		switch c {
		case cEventTime:
			b = ts(b, h.EventTime)
		case cEventDate:
			b = time.Unix(h.EventDate, 0).UTC().AppendFormat(b, "2006-01-02")
		case cOriginalURL:
			if r.IntN(4) == 0 {
				b = append(b, h.URL...)
			}
		case cPageCharset:
			b = append(b, charsets[r.IntN(len(charsets))]...)
		case cBrowserLanguage:
			b = append(b, langs[logUniform(r, len(langs))]...)
		case cClientEventTime, cLocalEventTime:
			b = ts(b, h.EventTime+int64(r.IntN(7200))-3600)
		default:
			switch col.kind {
			case kInt32:
				b = strconv.AppendInt(b, int64(logUniform(r, 40)), 10)
			case kInt64:
				b = strconv.AppendInt(b, r.Int64N(1<<40), 10)
			case kString:
				if r.IntN(8) == 0 {
					b = append(b, words[r.IntN(len(words))]...)
				}
			}
		}
	}
	if isRefresh {
		b = append(b, '\t')
		b = strconv.AppendInt(b, int64(h.Refresh), 10)
	}
	return append(b, '\n')
}
