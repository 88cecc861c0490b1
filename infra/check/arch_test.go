package check

import "runtime"

const runtimeGOARCH = runtime.GOARCH
