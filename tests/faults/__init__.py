"""Fault injection: each test breaks one part (a service that is not there, a hostile
request, a member who left) and checks the site degrades or refuses as documented."""
