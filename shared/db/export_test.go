package db

// UsageBucket is usageBucket, for TestUsageBucketMatchesSQL.
var UsageBucket = usageBucket
