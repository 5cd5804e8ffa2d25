import StompboxDSP
import CGtk
