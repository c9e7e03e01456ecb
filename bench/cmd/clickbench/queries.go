package main

import (
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// The 43 ClickBench queries as ClickBench's MongoDB setup defines them
// (mongodb/queries.sql in ClickBench, one aggregation pipeline per query),
// in Extended JSON. Q29 (90 sums) is built by sumsPipeline.
var queryText = []string{
	/* Q0 */ `[{"$project": {"_id": 1}}, {"$count": "c"}]`,
	/* Q1 */ `[{"$match": {"AdvEngineID": {"$ne": 0}}}, {"$count": "c"}]`,
	/* Q2 */ `[{"$group": {"_id": null, "sum_AdvEngineID": {"$sum": "$AdvEngineID"}, "c": {"$sum": 1},
		"avg_ResolutionWidth": {"$avg": "$ResolutionWidth"}}}]`,
	/* Q3 */ `[{"$group": {"_id": null, "a": {"$avg": {"$toDecimal": "$UserID"}}}}]`,
	/* Q4 */ `[{"$group": {"_id": "$UserID"}}, {"$count": "c"}]`,
	/* Q5 */ `[{"$group": {"_id": "$SearchPhrase"}}, {"$count": "c"}]`,
	/* Q6 */ `[{"$sort": {"EventDate": 1}}, {"$limit": 1},
		{"$unionWith": {"coll": "hits", "pipeline": [{"$sort": {"EventDate": -1}}, {"$limit": 1}]}},
		{"$group": {"_id": null, "tmpArray": {"$push": "$EventDate"}}},
		{"$project": {"min": {"$arrayElemAt": ["$tmpArray", 0]}, "max": {"$arrayElemAt": ["$tmpArray", 1]}}}]`,
	/* Q7 */ `[{"$match": {"AdvEngineID": {"$ne": 0}}}, {"$group": {"_id": "$AdvEngineID", "c": {"$sum": 1}}}, {"$sort": {"c": -1}}]`,
	/* Q8 */ `[{"$group": {"_id": {"RegionID": "$RegionID", "UserID": "$UserID"}}},
		{"$group": {"_id": "$_id.RegionID", "u": {"$sum": 1}}}, {"$sort": {"u": -1}}, {"$limit": 10}]`,
	/* Q9 */ `[{"$group": {"_id": "$RegionID", "sum_AdvEngineID": {"$sum": "$AdvEngineID"},
			"avg_ResolutionWidth": {"$avg": "$ResolutionWidth"}, "c": {"$sum": 1}}},
		{"$sort": {"c": -1}}, {"$limit": 10},
		{"$lookup": {"from": "hits", "let": {"regionIdVar": "$_id"}, "pipeline": [
			{"$match": {"$expr": {"$eq": ["$RegionID", "$$regionIdVar"]}}},
			{"$group": {"_id": "$UserID"}}, {"$count": "c"}], "as": "count_distinct_UserID"}},
		{"$set": {"count_distinct_UserID": {"$arrayElemAt": ["$count_distinct_UserID.c", 0]}}}]`,
	/* Q10 */ `[{"$match": {"MobilePhoneModel": {"$ne": ""}}},
		{"$group": {"_id": {"MobilePhoneModel": "$MobilePhoneModel", "UserID": "$UserID"}}},
		{"$group": {"_id": "$_id.MobilePhoneModel", "u": {"$sum": 1}}}, {"$sort": {"u": -1}}, {"$limit": 10}]`,
	/* Q11 */ `[{"$match": {"MobilePhoneModel": {"$ne": ""}}},
		{"$group": {"_id": {"MobilePhone": "$MobilePhone", "MobilePhoneModel": "$MobilePhoneModel", "UserID": "$UserID"}}},
		{"$group": {"_id": {"MobilePhone": "$_id.MobilePhone", "MobilePhoneModel": "$_id.MobilePhoneModel"}, "u": {"$sum": 1}}},
		{"$sort": {"u": -1}}, {"$limit": 10}]`,
	/* Q12 */ `[{"$match": {"SearchPhrase": {"$ne": ""}}}, {"$group": {"_id": "$SearchPhrase", "c": {"$sum": 1}}},
		{"$sort": {"c": -1}}, {"$limit": 10}]`,
	/* Q13 */ `[{"$match": {"SearchPhrase": {"$ne": ""}}},
		{"$group": {"_id": {"SearchPhrase": "$SearchPhrase", "UserID": "$UserID"}}},
		{"$group": {"_id": "$_id.SearchPhrase", "u": {"$sum": 1}}}, {"$sort": {"u": -1}}, {"$limit": 10}]`,
	/* Q14 */ `[{"$match": {"SearchPhrase": {"$ne": ""}}},
		{"$group": {"_id": {"$concat": ["$SearchPhrase", "|", {"$toString": "$SearchEngineID"}]},
			"SearchPhrase": {"$first": "$SearchPhrase"}, "SearchEngineID": {"$first": "$SearchEngineID"}, "c": {"$sum": 1}}},
		{"$sort": {"c": -1}}, {"$limit": 10}]`,
	/* Q15 */ `[{"$group": {"_id": "$UserID", "c": {"$sum": 1}}}, {"$sort": {"c": -1}}, {"$limit": 10}]`,
	/* Q16 */ `[{"$group": {"_id": {"$concat": ["$SearchPhrase", "|", {"$toString": "$UserID"}]},
			"SearchPhrase": {"$first": "$SearchPhrase"}, "UserID": {"$first": "$UserID"}, "c": {"$sum": 1}}},
		{"$sort": {"c": -1}}, {"$limit": 10}]`,
	/* Q17 */ `[{"$group": {"_id": {"$concat": ["$SearchPhrase", "|", {"$toString": "$UserID"}]},
			"SearchPhrase": {"$first": "$SearchPhrase"}, "UserID": {"$first": "$UserID"}, "c": {"$sum": 1}}},
		{"$limit": 10}]`,
	/* Q18 */ `[{"$group": {"_id": {"UserID": "$UserID", "SearchPhrase": "$SearchPhrase", "m": {"$minute": "$EventTime"}}, "c": {"$sum": 1}}},
		{"$sort": {"c": -1}}, {"$limit": 10}]`,
	/* Q19 */ `[{"$match": {"UserID": {"$numberLong": "435090932899640449"}}}, {"$project": {"UserID": 1}}]`,
	/* Q20 */ `[{"$match": {"URL": {"$regularExpression": {"pattern": "google", "options": ""}}}}, {"$count": "c"}]`,
	/* Q21 */ `[{"$match": {"URL": {"$regularExpression": {"pattern": "google", "options": ""}}, "SearchPhrase": {"$ne": ""}}},
		{"$group": {"_id": "$SearchPhrase", "min_URL": {"$min": "$URL"}, "c": {"$sum": 1}}},
		{"$sort": {"c": -1}}, {"$limit": 10}]`,
	/* Q22 */ `[{"$match": {"Title": {"$regularExpression": {"pattern": "Google", "options": ""}},
			"URL": {"$not": {"$regularExpression": {"pattern": "\\.google\\.", "options": ""}}}, "SearchPhrase": {"$ne": ""}}},
		{"$group": {"_id": "$SearchPhrase", "count_distinct_UserID": {"$addToSet": "$UserID"},
			"min_Title": {"$min": "$Title"}, "min_URL": {"$min": "$URL"}, "c": {"$sum": 1}}},
		{"$set": {"count_distinct_UserID": {"$size": "$count_distinct_UserID"}}},
		{"$sort": {"c": -1}}, {"$limit": 10}]`,
	/* Q23 */ `[{"$match": {"URL": {"$regularExpression": {"pattern": "google", "options": ""}}}}, {"$sort": {"EventTime": 1}}, {"$limit": 10}]`,
	/* Q24 */ `[{"$match": {"SearchPhrase": {"$ne": ""}}}, {"$project": {"_id": 0, "SearchPhrase": 1}},
		{"$sort": {"EventTime": 1}}, {"$limit": 10}]`,
	/* Q25 */ `[{"$match": {"SearchPhrase": {"$ne": ""}}}, {"$sort": {"SearchPhrase": 1}}, {"$project": {"SearchPhrase": 1}}, {"$limit": 10}]`,
	/* Q26 */ `[{"$match": {"SearchPhrase": {"$ne": ""}}}, {"$project": {"_id": 0, "EventTime": 1, "SearchPhrase": 1}},
		{"$sort": {"EventTime": 1, "SearchPhrase": 1}}, {"$limit": 10}]`,
	/* Q27 */ `[{"$match": {"URL": {"$ne": ""}}},
		{"$group": {"_id": "$CounterID", "l": {"$avg": {"$strLenBytes": "$URL"}}, "c": {"$sum": 1}}},
		{"$match": {"c": {"$gt": 100000}}}, {"$sort": {"l": -1}}, {"$limit": 25}]`,
	/* Q28 */ `[{"$match": {"Referer": {"$ne": ""}}}, {"$project": {"_id": 0, "Referer": 1}},
		{"$set": {"k": {"$regexFind": {"input": "$Referer", "regex": "^https?://(?:www\\.)?([^/]+)/.*$"}}}},
		{"$group": {"_id": {"$ifNull": [{"$first": "$k.captures"}, "$Referer"]},
			"l": {"$avg": {"$strLenBytes": "$Referer"}}, "c": {"$sum": 1}, "min_Referer": {"$min": "$Referer"}}},
		{"$match": {"c": {"$gt": 100000}}}, {"$sort": {"l": -1}}, {"$limit": 25}]`,
	/* Q29 */ "",
	/* Q30 */ `[{"$match": {"SearchPhrase": {"$ne": ""}}},
		{"$group": {"_id": {"$concat": [{"$toString": "$SearchEngineID"}, "|", {"$toString": "$ClientIP"}]},
			"SearchEngineID": {"$first": "$SearchEngineID"}, "ClientIP": {"$first": "$ClientIP"},
			"avg_ResolutionWidth": {"$avg": "$ResolutionWidth"}, "sum_IsRefresh": {"$sum": "$IsRefresh"}, "c": {"$sum": 1}}},
		{"$sort": {"c": -1}}, {"$limit": 10}]`,
	/* Q31 */ `[{"$match": {"SearchPhrase": {"$ne": ""}}},
		{"$group": {"_id": {"$concat": [{"$toString": "$WatchID"}, "|", {"$toString": "$ClientIP"}]},
			"WatchID": {"$first": "$WatchID"}, "ClientIP": {"$first": "$ClientIP"},
			"avg_ResolutionWidth": {"$avg": "$ResolutionWidth"}, "sum_IsRefresh": {"$sum": "$IsRefresh"}, "c": {"$sum": 1}}},
		{"$sort": {"c": -1}}, {"$limit": 10}]`,
	/* Q32 */ `[{"$group": {"_id": {"$concat": [{"$toString": "$ClientIP"}, "|", {"$toString": "$WatchID"}]},
			"WatchID": {"$first": "$WatchID"}, "ClientIP": {"$first": "$ClientIP"},
			"avg_ResolutionWidth": {"$avg": "$ResolutionWidth"}, "sum_IsRefresh": {"$sum": "$IsRefresh"}, "c": {"$sum": 1}}},
		{"$sort": {"c": -1}}, {"$limit": 10}]`,
	/* Q33 */ `[{"$group": {"_id": "$URL", "c": {"$sum": 1}}}, {"$sort": {"c": -1}}, {"$limit": 10}]`,
	/* Q34 */ `[{"$group": {"_id": "$URL", "c": {"$sum": 1}}}, {"$sort": {"c": -1}}, {"$limit": 10}, {"$set": {"one": 1}}]`,
	/* Q35 */ `[{"$group": {"_id": "$ClientIP", "c": {"$sum": 1}}}, {"$sort": {"c": -1}}, {"$limit": 10},
		{"$set": {"ClientIP_0": "$_id", "ClientIP_1": {"$add": ["$_id", -1]}, "ClientIP_2": {"$add": ["$_id", -2]},
			"ClientIP_3": {"$add": ["$_id", -3]}}}]`,
	/* Q36 */ `[{"$match": {"CounterID": 62, "EventDate": {"$gte": {"$date": "2013-07-01T00:00:00Z"}, "$lte": {"$date": "2013-07-31T00:00:00Z"}},
			"DontCountHits": 0, "IsRefresh": 0, "URL": {"$ne": ""}}},
		{"$group": {"_id": "$URL", "pageViews": {"$sum": 1}}}, {"$sort": {"pageViews": -1}}, {"$limit": 10}]`,
	/* Q37 */ `[{"$match": {"CounterID": 62, "EventDate": {"$gte": {"$date": "2013-07-01T00:00:00Z"}, "$lte": {"$date": "2013-07-31T00:00:00Z"}},
			"DontCountHits": 0, "IsRefresh": 0, "Title": {"$ne": ""}}},
		{"$group": {"_id": "$Title", "pageViews": {"$sum": 1}}}, {"$sort": {"pageViews": -1}}, {"$limit": 10}]`,
	/* Q38 */ `[{"$match": {"CounterID": 62, "EventDate": {"$gte": {"$date": "2013-07-01T00:00:00Z"}, "$lte": {"$date": "2013-07-31T00:00:00Z"}},
			"IsRefresh": 0, "IsLink": {"$ne": 0}, "IsDownload": 0, "URL": {"$ne": ""}}},
		{"$group": {"_id": "$Title", "pageViews": {"$sum": 1}}}, {"$sort": {"pageViews": -1}}, {"$skip": 1000}, {"$limit": 10}]`,
	/* Q39 */ `[{"$match": {"CounterID": 62, "EventDate": {"$gte": {"$date": "2013-07-01T00:00:00Z"}, "$lte": {"$date": "2013-07-31T00:00:00Z"}},
			"IsRefresh": 0}},
		{"$set": {"Src": {"$cond": {"if": {"$and": [{"$eq": ["$SearchEngineID", 0]}, {"$eq": ["$AdvEngineID", 0]}]}, "then": "$Referer", "else": ""}},
			"Dst": "$URL"}},
		{"$group": {"_id": {"TraficSourceID": "$TraficSourceID", "SearchEngineID": "$SearchEngineID", "AdvEngineID": "$AdvEngineID",
			"Src": "$Src", "Dst": "$Dst"}, "pageViews": {"$sum": 1}}},
		{"$sort": {"pageViews": -1}}, {"$skip": 1000}, {"$limit": 10}]`,
	/* Q40 */ `[{"$match": {"CounterID": 62, "EventDate": {"$gte": {"$date": "2013-07-01T00:00:00Z"}, "$lte": {"$date": "2013-07-31T00:00:00Z"}},
			"IsRefresh": 0, "TraficSourceID": {"$in": [-1, 6]}, "RefererHash": {"$numberLong": "3594120000172545465"}}},
		{"$group": {"_id": {"URLHash": "$URLHash", "EventDate": "$EventDate"}, "pageViews": {"$sum": 1}}},
		{"$sort": {"pageViews": -1}}, {"$skip": 100}, {"$limit": 10}]`,
	/* Q41 */ `[{"$match": {"CounterID": 62, "EventDate": {"$gte": {"$date": "2013-07-01T00:00:00Z"}, "$lte": {"$date": "2013-07-31T00:00:00Z"}},
			"IsRefresh": 0, "DontCountHits": 0, "URLHash": {"$numberLong": "2868770270353813622"}}},
		{"$group": {"_id": {"WindowClientWidth": "$WindowClientWidth", "WindowClientHeight": "$WindowClientHeight"}, "pageViews": {"$sum": 1}}},
		{"$sort": {"pageViews": -1}}, {"$skip": 10000}, {"$limit": 10}]`,
	/* Q42 */ `[{"$match": {"CounterID": 62, "EventDate": {"$gte": {"$date": "2013-07-14T00:00:00Z"}, "$lte": {"$date": "2013-07-15T00:00:00Z"}},
			"IsRefresh": 0, "DontCountHits": 0}},
		{"$group": {"_id": {"$dateTrunc": {"date": "$EventTime", "unit": "minute"}}, "pageViews": {"$sum": 1}}},
		{"$sort": {"_id": 1}}, {"$skip": 1000}, {"$limit": 10}]`,
}

// sumsPipeline is Q29: 90 sums of ResolutionWidth + k over a $toLong projection.
func sumsPipeline() string {
	var b strings.Builder
	b.WriteString(`[{"$project": {"_id": 0, "ResolutionWidth": {"$toLong": "$ResolutionWidth"}}}, {"$group": {"_id": null`)
	for k := 0; k < 90; k++ {
		fmt.Fprintf(&b, `, "srw_plus_%d": {"$sum": {"$add": ["$ResolutionWidth", %d]}}`, k, k)
	}
	b.WriteString(`}}]`)
	return b.String()
}

// pipelines parses the queries into driver values.
func pipelines() ([]bson.A, error) {
	out := make([]bson.A, len(queryText))
	for i, q := range queryText {
		if i == 29 {
			q = sumsPipeline()
		}
		var w struct {
			P bson.A `bson:"p"`
		}
		if err := bson.UnmarshalExtJSON([]byte(`{"p": `+q+`}`), false, &w); err != nil {
			return nil, fmt.Errorf("Q%d: %w", i, err)
		}
		out[i] = w.P
	}
	return out, nil
}
