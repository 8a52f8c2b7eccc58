module acms/clients/go

go 1.19

// The versions Debian 12 packages in /usr/share/gocode (golang-google-grpc-dev 1.33.3,
// golang-google-protobuf-dev 1.28.1, golang-github-golang-protobuf-1-5-dev 1.5.2,
// golang-google-genproto-dev git20200413.b5235f6, golang-golang-x-net-dev 0.7.0, -sys-dev 0.3.0,
// -text-dev 0.7.0). Nothing is downloaded: vendor-debian.sh builds vendor/ from those sources.
require (
	github.com/golang/protobuf v1.5.2
	golang.org/x/net v0.7.0
	golang.org/x/sys v0.3.0
	golang.org/x/text v0.7.0
	google.golang.org/genproto v0.0.0-20200413115906-b5235f65be36
	google.golang.org/grpc v1.33.3
	google.golang.org/protobuf v1.28.1
)
