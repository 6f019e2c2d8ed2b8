package redisconn

import (
	"os"
	"strings"
)

// ReadPassword takes the password from a file (its first line) or an
// environment variable, read through getenv so tests stay hermetic.
func ReadPassword(envName, file string, getenv func(string) string) (string, error) {
	switch {
	case envName != "" && file != "":
		return "", inputErr("use --password-env or --password-file, not both")
	case envName != "":
		v := getenv(envName)
		if v == "" {
			return "", inputErr("--password-env " + envName + ": the variable is empty or unset")
		}
		return v, nil
	case file != "":
		data, err := os.ReadFile(file)
		if err != nil {
			return "", inputErr("--password-file: " + err.Error())
		}
		line, _, _ := strings.Cut(string(data), "\n")
		return strings.TrimRight(line, "\r"), nil
	}
	return "", nil
}
