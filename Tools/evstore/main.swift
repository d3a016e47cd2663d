import ArgumentParser
import Hummingbird
import AsyncHTTPClient
print("placeholder")
