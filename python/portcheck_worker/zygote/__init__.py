"""Runs in a zygote: a process the fork server (or a base zygote) forks that imports a user's
package once and forks that package's cells. Imports base/, compile/, forking/ and cell/ (what
its forked children run)."""
