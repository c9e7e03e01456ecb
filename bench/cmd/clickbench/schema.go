package main

import (
	"fmt"
	"io"
)

// kind is the type of a hits column as ClickBench's MongoDB setup imports
// it (mongoimport's --columnsHaveTypes names).
type kind uint8

const (
	kInt32 kind = iota
	kInt64
	kString
	kDate     // a date, "2006-01-02"
	kDateTime // a date and time, "2006-01-02 15:04:05"
)

// column is one field of the hits table.
type column struct {
	name string
	kind kind
}

// The 105 columns of hits in file order. Indexes into this table are the
// c* constants below, for the columns the generator shapes on purpose.
var columns = []column{
	{"WatchID", kInt64}, {"JavaEnable", kInt32}, {"Title", kString}, {"GoodEvent", kInt32},
	{"EventTime", kDateTime}, {"EventDate", kDate}, {"CounterID", kInt32}, {"ClientIP", kInt32},
	{"RegionID", kInt32}, {"UserID", kInt64}, {"CounterClass", kInt32}, {"OS", kInt32},
	{"UserAgent", kInt32}, {"URL", kString}, {"Referer", kString}, {"Refresh", kInt32},
	{"RefererCategoryID", kInt32}, {"RefererRegionID", kInt32}, {"URLCategoryID", kInt32}, {"URLRegionID", kInt32},
	{"ResolutionWidth", kInt32}, {"ResolutionHeight", kInt32}, {"ResolutionDepth", kInt32}, {"FlashMajor", kInt32},
	{"FlashMinor", kInt32}, {"FlashMinor2", kString}, {"NetMajor", kInt32}, {"NetMinor", kInt32},
	{"UserAgentMajor", kInt32}, {"UserAgentMinor", kString}, {"CookieEnable", kInt32}, {"JavascriptEnable", kInt32},
	{"IsMobile", kInt32}, {"MobilePhone", kInt32}, {"MobilePhoneModel", kString}, {"Params", kString},
	{"IPNetworkID", kInt32}, {"TraficSourceID", kInt32}, {"SearchEngineID", kInt32}, {"SearchPhrase", kString},
	{"AdvEngineID", kInt32}, {"IsArtifical", kInt32}, {"WindowClientWidth", kInt32}, {"WindowClientHeight", kInt32},
	{"ClientTimeZone", kInt32}, {"ClientEventTime", kDateTime}, {"SilverlightVersion1", kInt32}, {"SilverlightVersion2", kInt32},
	{"SilverlightVersion3", kInt32}, {"SilverlightVersion4", kInt32}, {"PageCharset", kString}, {"CodeVersion", kInt32},
	{"IsLink", kInt32}, {"IsDownload", kInt32}, {"IsNotBounce", kInt32}, {"FUniqID", kInt64},
	{"OriginalURL", kString}, {"HID", kInt32}, {"IsOldCounter", kInt32}, {"IsEvent", kInt32},
	{"IsParameter", kInt32}, {"DontCountHits", kInt32}, {"WithHash", kInt32}, {"HitColor", kString},
	{"LocalEventTime", kDateTime}, {"Age", kInt32}, {"Sex", kInt32}, {"Income", kInt32},
	{"Interests", kInt32}, {"Robotness", kInt32}, {"RemoteIP", kInt32}, {"WindowName", kInt32},
	{"OpenerName", kInt32}, {"HistoryLength", kInt32}, {"BrowserLanguage", kString}, {"BrowserCountry", kString},
	{"SocialNetwork", kString}, {"SocialAction", kString}, {"HTTPError", kInt32}, {"SendTiming", kInt32},
	{"DNSTiming", kInt32}, {"ConnectTiming", kInt32}, {"ResponseStartTiming", kInt32}, {"ResponseEndTiming", kInt32},
	{"FetchTiming", kInt32}, {"SocialSourceNetworkID", kInt32}, {"SocialSourcePage", kString}, {"ParamPrice", kInt64},
	{"ParamOrderID", kString}, {"ParamCurrency", kString}, {"ParamCurrencyID", kInt32}, {"OpenstatServiceName", kString},
	{"OpenstatCampaignID", kString}, {"OpenstatAdID", kString}, {"OpenstatSourceID", kString}, {"UTMSource", kString},
	{"UTMMedium", kString}, {"UTMCampaign", kString}, {"UTMContent", kString}, {"UTMTerm", kString},
	{"FromTag", kString}, {"HasGCLID", kInt32}, {"RefererHash", kInt64}, {"URLHash", kInt64},
	{"CLID", kInt32},
}

// Column positions the generator and the checker use.
const (
	cWatchID            = 0
	cTitle              = 2
	cEventTime          = 4
	cEventDate          = 5
	cCounterID          = 6
	cClientIP           = 7
	cRegionID           = 8
	cUserID             = 9
	cURL                = 13
	cReferer            = 14
	cRefresh            = 15
	cResolutionWidth    = 20
	cMobilePhone        = 33
	cMobilePhoneModel   = 34
	cTraficSourceID     = 37
	cSearchEngineID     = 38
	cSearchPhrase       = 39
	cAdvEngineID        = 40
	cWindowClientWidth  = 42
	cWindowClientHeight = 43
	cIsLink             = 52
	cIsDownload         = 53
	cDontCountHits      = 61
	cRefererHash        = 102
	cURLHash            = 103
	cPageCharset        = 50
	cOriginalURL        = 56
	cClientEventTime    = 45
	cLocalEventTime     = 64
	cBrowserLanguage    = 74
)

// isRefreshColumn is not a column of hits: ClickBench's MongoDB pipelines
// filter and sum on IsRefresh where its SQL says Refresh. Without it every
// {IsRefresh: 0} matches nothing; with -isrefresh (the default) the
// generator appends it as a 106th column equal to Refresh.
var isRefreshColumn = column{"IsRefresh", kInt32}

// writeFieldFile writes the --fieldFile for `cairn import --columnsHaveTypes`.
func writeFieldFile(w io.Writer, isRefresh bool) error {
	cols := columns
	if isRefresh {
		cols = append(cols[:len(cols):len(cols)], isRefreshColumn)
	}
	for _, c := range cols {
		var t string
		switch c.kind {
		case kInt32:
			t = "int32()"
		case kInt64:
			t = "int64()"
		case kString:
			t = "string()"
		case kDate:
			t = "date_go(2006-01-02)"
		case kDateTime:
			t = "date_go(2006-01-02 15:04:05)"
		}
		if _, err := fmt.Fprintf(w, "%s.%s\n", c.name, t); err != nil {
			return err
		}
	}
	return nil
}
