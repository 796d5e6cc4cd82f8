module dns-bench

go 1.26.8
