//go:build !unix

package regularfile

// nonBlock is 0 where the system has no O_NONBLOCK: there the check after
// opening is what refuses a file that is not a regular file.
const nonBlock = 0
