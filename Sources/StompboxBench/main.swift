import StompboxDSP
print("bench")
